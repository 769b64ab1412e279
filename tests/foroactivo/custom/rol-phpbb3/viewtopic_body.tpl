<!-- an admin-edited viewtopic_body, as role-playing boards write them: the phpBB3 default (Etana/template@3ca46e4257dea5e96ac85ce43f1c005d1c1b04fe src/prosilver/viewtopic_body.tpl) with the author line and the profile column replaced by a character card (name, date, RPG fields) beside the text; the variables are the default template's. For the worked example in docs/foroactivo.md. -->
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
		<div id="p{postrow.displayed.U_POST_ID}" class="post rol-mensaje post--{postrow.displayed.U_POST_ID}">
			<div style="position: relative; top: -30px; width: 1px;" id="{postrow.displayed.U_POST_ID}"></div>
			<div class="rol-ficha">
				{postrow.displayed.POSTER_AVATAR}
				<div class="rol-nombre">{postrow.displayed.POSTER_NAME}</div>
				<div class="rol-rango">{postrow.displayed.POSTER_RANK_NEW}</div>
				<div class="rol-campos">{postrow.displayed.POSTER_RPG}</div>
			</div>
			<div class="rol-cuerpo">
				<div class="rol-fecha"><a href="{postrow.displayed.POST_URL}">#</a> {postrow.displayed.POST_DATE}</div>
				<div class="rol-texto">{postrow.displayed.MESSAGE}</div>
				{postrow.displayed.EDITED_MESSAGE}
				<!-- BEGIN switch_signature -->
				<div class="rol-firma">{postrow.displayed.SIGNATURE_NEW}</div>
				<!-- END switch_signature -->
			</div>
		</div>
	<!-- END displayed -->
<!-- END postrow -->
<div class="topic-actions">
	<!-- BEGIN topicpagination -->
	<div class="pagination">{PAGE_NUMBER} &nbsp;&bull;&nbsp; {PAGINATION}</div>
	<!-- END topicpagination -->
</div>
