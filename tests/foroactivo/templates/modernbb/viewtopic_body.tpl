<!-- follows Etana/template@3ca46e4257dea5e96ac85ce43f1c005d1c1b04fe src/modernbb/viewtopic_body.tpl (trimmed: no vote widget, attachments, quick reply or moderation) -->
<div class="sub-header">
	<div class="sub-header-info">
		<h1 class="page-title">
			<a href="{TOPIC_URL}">{TOPIC_TITLE}</a>
		</h1>
		<div class="sub-header-path">
			<a class="nav" href="{U_INDEX}"><span>Índice</span></a>
		</div>
	</div>
	<div class="sub-header-buttons">
		<!-- BEGIN switch_user_logged_in --><a href="{U_POST_REPLY_TOPIC}" class="ion-reply button1" rel="nofollow"><span>Responder</span></a><!-- END switch_user_logged_in -->
	</div>
</div>
<div class="topic-actions">
	<!-- BEGIN topicpagination -->
		<div class="pagination">
			{PAGINATION}
		</div>
	<!-- END topicpagination -->
</div>
<!-- BEGIN postrow -->
	<!-- BEGIN displayed -->
		<div id="p{postrow.displayed.U_POST_ID}" class="post {postrow.displayed.ROW_COUNT} post--{postrow.displayed.U_POST_ID}" style="">
            <div style="position: relative; top: -30px; width: 1px;" id="{postrow.displayed.U_POST_ID}"></div>
			<div class="postprofile" id="profile{postrow.displayed.U_POST_ID}">
				<dl>
					<dt>
						<div class="postprofile-avatar">
							{postrow.displayed.POSTER_AVATAR}
						</div>
						<div class="postprofile-name">
							{postrow.displayed.POSTER_NAME}
						</div>
						<div class="postprofile-rank">
							{postrow.displayed.POSTER_RANK_NEW}
						</div>
					</dt>
					<dd class="postprofile-info">
						<!-- BEGIN profile_field -->
							{postrow.displayed.profile_field.LABEL}
							{postrow.displayed.profile_field.CONTENT}
							{postrow.displayed.profile_field.SEPARATOR}
						<!-- END profile_field -->
						{postrow.displayed.POSTER_RPG}
					</dd>
					<dd class="postprofile-contact">
						{postrow.displayed.PROFILE_IMG}
					</dd>
				</dl>
			</div>
			<div class="post-head">
				<ul class="profile-icons"><li class="btn-quote">{postrow.displayed.QUOTE_IMG}</li></ul>
				<h2 class="topic-title"> <a href="{postrow.displayed.POST_URL}">{postrow.displayed.POST_SUBJECT}</a></h2>
				<div class="topic-date">
					{postrow.displayed.POST_DATE_NEW}
					<div class="vote"></div>
				</div>
			</div>
			<div class="postbody">
				<div class="content">
					<div>{postrow.displayed.MESSAGE}</div>
				</div>
				<div class="edited-message">
					{postrow.displayed.EDITED_MESSAGE}
				</div>
				<!-- BEGIN switch_signature -->
					<div class="signature_div" id="sig{postrow.displayed.U_POST_ID}">{postrow.displayed.SIGNATURE_NEW}</div>
				<!-- END switch_signature -->
			</div>
		</div>
		<!-- BEGIN first_post_br -->
		<hr id="first-post-br" />
		<!-- END first_post_br -->
	<!-- END displayed -->
<!-- END postrow -->
<div class="topic-actions bottom">
	<!-- BEGIN topicpagination -->
		<div class="pagination">
			{PAGINATION}
		</div>
	<!-- END topicpagination -->
</div>
