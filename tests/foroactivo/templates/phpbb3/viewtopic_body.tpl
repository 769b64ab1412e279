<!-- follows Etana/template@3ca46e4257dea5e96ac85ce43f1c005d1c1b04fe src/prosilver/viewtopic_body.tpl (trimmed: no vote widget, attachments, quick reply or moderation) -->
<h1 class="page-title">
	<a href="{TOPIC_URL}">{TOPIC_TITLE}</a>
</h1>
<div class="topic-actions">
	<div class="buttons"><!-- BEGIN switch_user_logged_in --><a href="{U_POST_REPLY_TOPIC}" rel="nofollow"><img src="https://illiweb.com/fa/prosilver/reply.gif" class="i_reply" alt="Responder al tema" /></a><!-- END switch_user_logged_in --></div>
	<!-- BEGIN topicpagination -->
	<p class="pagination">{PAGINATION}</p>
	<!-- END topicpagination -->
</div>
<div class="clear"></div>
<!-- BEGIN postrow -->
	<!-- BEGIN displayed -->
		<div id="p{postrow.displayed.U_POST_ID}" class="post {postrow.displayed.ROW_COUNT} post--{postrow.displayed.U_POST_ID}" style="">
			<div class="inner"><span class="corners-top"><span></span></span>
			<div style="position: relative; top: -30px; width: 1px;" id="{postrow.displayed.U_POST_ID}"></div>
			<div class="postbody">
				<ul class="profile-icons">
					<li>{postrow.displayed.QUOTE_IMG}</li>
				</ul>
				<h2 class="topic-title"> <a href="{postrow.displayed.POST_URL}">{postrow.displayed.POST_SUBJECT}</a></h2>
				<p class="author"><img src="https://illiweb.com/fa/empty.gif" alt="Mensaje" title="Mensaje" />&nbsp;por&nbsp;{postrow.displayed.POSTER_NAME} {postrow.displayed.POST_DATE_NEW}</p>
				<div class="clearfix"></div>
				<div style="display:none"></div>
				<div class="content clearfix">
					<div>{postrow.displayed.MESSAGE}</div>
				</div>
				{postrow.displayed.EDITED_MESSAGE}
				<!-- BEGIN switch_signature -->
				<div class="signature_div" id="sig{postrow.displayed.U_POST_ID}">{postrow.displayed.SIGNATURE_NEW}</div>
				<!-- END switch_signature -->
			</div>

			<div class="postprofile" id="profile{postrow.displayed.U_POST_ID}">
				<dl>
					<dt>
						{postrow.displayed.POSTER_AVATAR}
						<br /><strong style="font-size:1.2em">{postrow.displayed.POSTER_NAME}</strong>
					</dt>
					<dd>{postrow.displayed.POSTER_RANK_NEW}</dd>
					<dd><br /></dd>
					<dd>
						<!-- BEGIN profile_field -->
						{postrow.displayed.profile_field.LABEL} {postrow.displayed.profile_field.CONTENT}{postrow.displayed.profile_field.SEPARATOR}
						<!-- END profile_field -->
						{postrow.displayed.POSTER_RPG}
					</dd>
					<dd><br /></dd>
					<dd>{postrow.displayed.PROFILE_IMG}</dd>
				</dl>
			</div>

			<div class="clear"></div>

			<p class="right"><a href="#top">Volver arriba</a>&nbsp;<a href="#bottom">Ir abajo</a></p>
			<span class="corners-bottom"><span></span></span></div>
		</div>
		<!-- BEGIN first_post_br -->
		<hr id="first-post-br" />
		<!-- END first_post_br -->
	<!-- END displayed -->
<!-- END postrow -->
<div class="topic-actions">
	<!-- BEGIN topicpagination -->
	<div class="pagination">{PAGE_NUMBER} &nbsp;&bull;&nbsp; {PAGINATION}</div>
	<!-- END topicpagination -->
</div>
